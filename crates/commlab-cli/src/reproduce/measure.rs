//! Reading figures out of a study's runs: each accessor gives the value or why there is none
//! (the run failed, a counter is absent), so a row or finding that needs a failed run says so.

use super::runs::{Results, RunSpec};
use crate::record::ResultRecord;
use commlab_api::{Category, TrafficClass};

pub(crate) type Measured = Result<f64, String>;

pub(crate) fn record<'a>(res: &'a Results, spec: &RunSpec) -> Result<&'a ResultRecord, String> {
    let r = res.get(spec)?;
    if r.check.ok {
        Ok(r)
    } else {
        Err(format!("answer check failed: {}", spec.command()))
    }
}

/// Run time in processor cycles.
pub(crate) fn cycles(res: &Results, spec: &RunSpec) -> Measured {
    Ok(record(res, spec)?.cycles)
}

/// Mean cycles per processor in one category of the breakdown.
pub(crate) fn time(res: &Results, spec: &RunSpec, c: Category) -> Measured {
    let v = record(res, spec)?.time(c);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("no `{}` in the breakdown of {}", c.name(), spec.command()))
    }
}

/// Bytes injected, every class but cross-traffic.
pub(crate) fn volume(res: &Results, spec: &RunSpec) -> Measured {
    let r = record(res, spec)?;
    Ok(TrafficClass::ALL
        .iter()
        .filter(|c| **c != TrafficClass::CrossTraffic)
        .map(|c| r.bytes(*c).unwrap_or(0) as f64)
        .sum())
}

/// Bytes of one traffic class.
pub(crate) fn bytes(res: &Results, spec: &RunSpec, c: TrafficClass) -> Measured {
    Ok(record(res, spec)?.bytes(c).unwrap_or(0) as f64)
}

/// A counter of the run.
pub(crate) fn counter(res: &Results, spec: &RunSpec, name: &str) -> Measured {
    let v = record(res, spec)?.counter(name);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("no counter `{name}` in {}", spec.command()))
    }
}

/// The value of `f` at `x` on a curve of (x, y) points, linearly interpolated (not extrapolated).
pub(crate) fn interpolate(points: &[(f64, f64)], x: f64) -> Measured {
    let mut p: Vec<(f64, f64)> = points.iter().copied().filter(|q| q.0.is_finite() && q.1.is_finite()).collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in p.windows(2) {
        let (a, b) = (w[0], w[1]);
        if (a.0..=b.0).contains(&x) {
            return Ok(if b.0 == a.0 { a.1 } else { a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0) });
        }
    }
    match p.iter().find(|q| q.0 == x) {
        Some(q) => Ok(q.1),
        None => Err(format!("x = {x:.3} is outside the measured range")),
    }
}

/// "5.99M", "412k", "37.2".
pub(crate) fn short(x: f64) -> String {
    if x.abs() >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x.abs() >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// "+12%".
pub(crate) fn pct(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_inside_the_range_only() {
        let c = [(0.0, 10.0), (2.0, 20.0), (4.0, 0.0)];
        assert_eq!(interpolate(&c, 1.0), Ok(15.0));
        assert_eq!(interpolate(&c, 3.0), Ok(10.0));
        assert_eq!(interpolate(&c, 4.0), Ok(0.0));
        assert!(interpolate(&c, 5.0).is_err());
    }
}
