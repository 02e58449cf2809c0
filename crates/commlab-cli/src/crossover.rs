//! Crossover detection: where two variants' curves change order.
//!
//! A pure function of the curves, so it is unit-tested on synthetic data. For each pair of
//! curves, the difference `y_a - y_b` is taken at the x values both curves have (sorted); a
//! crossover is a change of its sign:
//! - between two samples with opposite signs, the x where the straight lines between them meet
//!   (linear interpolation of the difference), with `y` the interpolated value of either curve;
//! - across a run of one or more samples where the curves are exactly equal, with opposite
//!   signs before and after the run, one crossover in the middle of the run (at the sample
//!   itself for a single equal sample);
//! - touching (equal at a sample, same order on both sides), ties at either end, and identical
//!   curves are not crossovers.
//!
//! Non-finite samples (a failed or missing point) are skipped.

use serde::Serialize;

/// Curves `a` and `b` change order at `x`, where both are (about) `y`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crossover {
    pub a: String,
    pub b: String,
    pub x: f64,
    pub y: f64,
}

/// Every crossover between every pair of `curves` (name, (x, y) points), pairs in input order
/// (`a` listed before `b`), each pair's crossovers by increasing x.
pub fn crossovers(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<Crossover> {
    let mut out = Vec::new();
    for (i, (na, ca)) in curves.iter().enumerate() {
        for (nb, cb) in &curves[i + 1..] {
            for (x, y) in pair_crossovers(ca, cb) {
                out.push(Crossover { a: na.clone(), b: nb.clone(), x, y });
            }
        }
    }
    out
}

/// Crossovers of two curves, as (x, y).
fn pair_crossovers(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    // Points both curves have at the same x: (x, y_a, y_b), by increasing x.
    let mut pts: Vec<(f64, f64, f64)> = a
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .filter_map(|&(x, ya)| b.iter().find(|(xb, yb)| *xb == x && yb.is_finite()).map(|&(_, yb)| (x, ya, yb)))
        .collect();
    pts.sort_by(|p, q| p.0.total_cmp(&q.0));
    pts.dedup_by(|p, q| p.0 == q.0);

    let mut out = Vec::new();
    // The last sample with a non-zero difference: (index, sign).
    let mut last: Option<(usize, f64)> = None;
    for (i, &(_, ya, yb)) in pts.iter().enumerate() {
        let d = ya - yb;
        if d == 0.0 {
            continue;
        }
        let sign = d.signum();
        if let Some((j, s)) = last {
            if s != sign {
                if j + 1 == i {
                    // Adjacent samples of opposite sign: interpolate the difference to zero.
                    let (x0, a0, b0) = pts[j];
                    let (x1, a1, _) = pts[i];
                    let d0 = a0 - b0;
                    let t = d0 / (d0 - d);
                    out.push((x0 + t * (x1 - x0), a0 + t * (a1 - a0)));
                } else {
                    // Equal on samples j+1 ..= i-1: one crossover in the middle of the tie.
                    let (first, last_tie) = (pts[j + 1].0, pts[i - 1].0);
                    let x = (first + last_tie) / 2.0;
                    out.push((x, interpolate(&pts[j + 1..i], x)));
                }
            }
        }
        last = Some((i, sign));
    }
    out
}

/// The piecewise-linear value at `x` of the `y_a` of tied samples (where `y_a == y_b`).
fn interpolate(tie: &[(f64, f64, f64)], x: f64) -> f64 {
    for w in tie.windows(2) {
        let ((x0, y0, _), (x1, y1, _)) = (w[0], w[1]);
        if x0 <= x && x <= x1 {
            return if x1 == x0 { y0 } else { y0 + (x - x0) / (x1 - x0) * (y1 - y0) };
        }
    }
    tie[0].1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(name: &str, pts: &[(f64, f64)]) -> (String, Vec<(f64, f64)>) {
        (name.to_string(), pts.to_vec())
    }

    fn xs(c: &[Crossover]) -> Vec<f64> {
        c.iter().map(|c| c.x).collect()
    }

    #[test]
    fn no_crossing() {
        let c = crossovers(&[
            curve("a", &[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]),
            curve("b", &[(0.0, 5.0), (1.0, 6.0), (2.0, 7.0)]),
        ]);
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn one_crossing_interpolated() {
        // a: 0 -> 10, b: 6 -> 2 between x = 1 and x = 3; difference -6 -> 8, zero at t = 6/14.
        let c = crossovers(&[curve("a", &[(1.0, 0.0), (3.0, 10.0)]), curve("b", &[(1.0, 6.0), (3.0, 2.0)])]);
        assert_eq!(c.len(), 1);
        let t = 6.0 / 14.0;
        assert!((c[0].x - (1.0 + 2.0 * t)).abs() < 1e-12, "{c:?}");
        assert!((c[0].y - 10.0 * t).abs() < 1e-12, "{c:?}");
        assert_eq!((c[0].a.as_str(), c[0].b.as_str()), ("a", "b"));
    }

    #[test]
    fn exact_midpoint() {
        let c = crossovers(&[curve("a", &[(0.0, 0.0), (2.0, 4.0)]), curve("b", &[(0.0, 4.0), (2.0, 0.0)])]);
        assert_eq!(c, vec![Crossover { a: "a".into(), b: "b".into(), x: 1.0, y: 2.0 }]);
    }

    #[test]
    fn several_crossings() {
        // b is flat at 1; a zig-zags 0, 2, 0, 2: crossings at 0.5, 1.5, 2.5.
        let c = crossovers(&[
            curve("a", &[(0.0, 0.0), (1.0, 2.0), (2.0, 0.0), (3.0, 2.0)]),
            curve("b", &[(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]),
        ]);
        assert_eq!(xs(&c), vec![0.5, 1.5, 2.5]);
        assert!(c.iter().all(|c| c.y == 1.0));
    }

    #[test]
    fn touching_is_not_a_crossing() {
        let c = crossovers(&[
            curve("a", &[(0.0, 2.0), (1.0, 1.0), (2.0, 2.0)]),
            curve("b", &[(0.0, 1.0), (1.0, 1.0), (2.0, 1.0)]),
        ]);
        assert!(c.is_empty(), "{c:?}");
        // A tie over several samples, same order on both sides: still touching.
        let c = crossovers(&[
            curve("a", &[(0.0, 2.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0)]),
            curve("b", &[(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]),
        ]);
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn crossing_exactly_at_a_sample() {
        let c = crossovers(&[
            curve("a", &[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]),
            curve("b", &[(0.0, 2.0), (1.0, 1.0), (2.0, 0.0)]),
        ]);
        assert_eq!(c, vec![Crossover { a: "a".into(), b: "b".into(), x: 1.0, y: 1.0 }]);
    }

    #[test]
    fn run_of_ties_then_change_is_one_crossing() {
        let c = crossovers(&[
            curve("a", &[(0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 3.0)]),
            curve("b", &[(0.0, 2.0), (1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 0.0)]),
        ]);
        assert_eq!(c, vec![Crossover { a: "a".into(), b: "b".into(), x: 2.0, y: 1.0 }]);
    }

    #[test]
    fn ties_at_the_ends_are_not_crossings() {
        let c = crossovers(&[
            curve("a", &[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]),
            curve("b", &[(0.0, 1.0), (1.0, 5.0), (2.0, 3.0)]),
        ]);
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn identical_curves() {
        let pts = [(0.0, 3.0), (1.0, 1.0), (2.0, 4.0)];
        assert!(crossovers(&[curve("a", &pts), curve("b", &pts)]).is_empty());
    }

    #[test]
    fn every_pair_in_input_order_and_unsorted_input() {
        // c crosses a and b; a and b never cross. Points given out of order.
        let c = crossovers(&[
            curve("a", &[(2.0, 1.0), (0.0, 1.0)]),
            curve("b", &[(0.0, 2.0), (2.0, 2.0)]),
            curve("c", &[(2.0, 3.0), (0.0, 0.0)]),
        ]);
        let got: Vec<(&str, &str, f64)> = c.iter().map(|c| (c.a.as_str(), c.b.as_str(), c.x)).collect();
        assert_eq!(got, vec![("a", "c", 2.0 / 3.0), ("b", "c", 4.0 / 3.0)]);
    }

    #[test]
    fn only_common_finite_points_count() {
        // b lacks x = 1 and has a NaN at x = 3; the crossing is found between x = 2 and x = 4.
        let c = crossovers(&[
            curve("a", &[(1.0, 9.0), (2.0, 0.0), (3.0, 0.0), (4.0, 4.0)]),
            curve("b", &[(2.0, 2.0), (3.0, f64::NAN), (4.0, 2.0)]),
        ]);
        assert_eq!(xs(&c), vec![3.0]);
    }

    #[test]
    fn serializes_as_a_b_x_y() {
        let v = serde_json::to_value(Crossover { a: "sm".into(), b: "bulk".into(), x: 1.5, y: 100.0 }).unwrap();
        assert_eq!(v, serde_json::json!({"a": "sm", "b": "bulk", "x": 1.5, "y": 100.0}));
    }
}
