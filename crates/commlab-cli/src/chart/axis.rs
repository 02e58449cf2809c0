//! Axes: ranges that are never empty, and the text of ticks and of values on a chart.

/// The k/M/G scale of an axis's tick labels, from its largest magnitude, so every label of
/// an axis uses the same one.
pub(super) fn tick_scale(lo: f64, hi: f64) -> (f64, &'static str) {
    let a = lo.abs().max(hi.abs());
    if a >= 1e10 {
        (1e9, "G")
    } else if a >= 1e7 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    }
}

/// A tick label: a short number in the axis's scale.
pub(super) fn tick(v: f64, (div, suffix): (f64, &str)) -> String {
    if v != 0.0 && v.abs() < 1e-3 && div == 1.0 {
        return format!("{v:.1e}");
    }
    let s = format!("{:.3}", v / div);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "0" || s == "-0" {
        return "0".to_string();
    }
    format!("{s}{suffix}")
}

/// Round tick values (1, 2 or 5 times a power of ten apart, about `count` of them) within
/// [lo, hi]: a colour bar labelled at lo + k (hi - lo) / 4 showed 299.996.
pub(super) fn nice_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo || count == 0 {
        return if lo.is_finite() { vec![lo] } else { Vec::new() };
    }
    let raw = (hi - lo) / count as f64;
    let power = 10f64.powf(raw.log10().floor());
    // Steps of 1, 2 and 5 times powers of ten, largest first, until three ticks or more fall
    // in the range.
    let mut ticks = Vec::new();
    for step in [10.0, 5.0, 2.0, 1.0, 0.5, 0.2, 0.1].map(|m| m * power) {
        let (first, last) = ((lo / step).ceil() as i64, (hi / step).floor() as i64);
        // Whole multiples of the step, each computed afresh (no accumulated residue); -0 is 0.
        ticks = (first..=last).map(|k| k as f64 * step).map(|v| if v == 0.0 { 0.0 } else { v }).collect();
        if ticks.len() >= 3 {
            break;
        }
    }
    ticks
}

/// A value printed on a chart (a bar total) or in a message: whole from 100 up, else up to 3 decimals.
pub(crate) fn short_number(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e9 || v.abs() < 1e-3) {
        return format!("{v:.3e}");
    }
    let s = if v.abs() >= 100.0 { format!("{v:.0}") } else { format!("{v:.3}") };
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// The y range of a chart: from 0 when all values are non-negative (so heights compare as
/// ratios), unless the values span less than a tenth of the largest (then the range zooms
/// to them with a margin); never empty.
pub(super) fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let (mut lo, mut hi) = if lo >= 0.0 && (hi - lo) >= 0.1 * hi { (0.0, hi) } else { (lo, hi) };
    if hi == lo {
        let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        lo = if lo >= 0.0 && lo - d < 0.0 { 0.0 } else { lo - d };
        hi += d;
    }
    let pad = (hi - lo) * 0.08;
    (if lo == 0.0 { 0.0 } else { lo - pad }, hi + pad)
}

/// The x range: the data's, widened when it is a single value; padded a little on a linear
/// axis so points are not on the frame.
pub(super) fn x_range(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        if hi / lo < 1.0001 {
            (lo / 2.0, hi * 2.0)
        } else {
            let f = (hi / lo).powf(0.04);
            (lo / f, hi * f)
        }
    } else if hi == lo {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.5 };
        (lo - d, hi + d)
    } else {
        let pad = (hi - lo) * 0.03;
        (lo - pad, hi + pad)
    }
}

/// Minimum and maximum of finite values (`None` when there is none).
pub(super) fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_and_value_text() {
        let one = tick_scale(0.0, 5000.0);
        assert_eq!(tick(0.0, one), "0");
        assert_eq!(tick(2.5, one), "2.5");
        assert_eq!(tick(5000.0, one), "5000");
        let k = tick_scale(0.0, 45000.0);
        assert_eq!(tick(5000.0, k), "5k");
        assert_eq!(tick(12500.0, k), "12.5k");
        assert_eq!(tick(-20000.0, tick_scale(-20000.0, 0.0)), "-20k");
        assert_eq!(tick(3e7, tick_scale(0.0, 3e7)), "30M");
        assert_eq!(tick(0.0001, one), "1.0e-4");
        assert_eq!(short_number(16182.82224), "16183");
        assert_eq!(short_number(10.0), "10");
        assert_eq!(short_number(0.125), "0.125");
    }

    #[test]
    fn colour_bar_ticks_are_round() {
        // Regression (issue 36, item 8): a heat map's colour bar showed 299.996.
        assert_eq!(nice_ticks(0.004, 299.996, 4), vec![50.0, 100.0, 150.0, 200.0, 250.0]);
        let texts: Vec<String> = nice_ticks(12.5, 13.4, 4).into_iter().map(|t| tick(t, (1.0, ""))).collect();
        assert_eq!(texts, ["12.6", "12.8", "13", "13.2", "13.4"]);
        assert_eq!(nice_ticks(5.0, 5.0, 4), vec![5.0]);
        assert!(nice_ticks(f64::NAN, 1.0, 4).is_empty());
        for t in nice_ticks(0.004, 299.996, 4) {
            assert!(!tick(t, tick_scale(0.004, 299.996)).contains('.'), "{t}");
        }
    }

    #[test]
    fn ranges_never_empty() {
        assert_eq!(y_range(0.0, 0.0), (0.0, 1.0 * 1.08));
        let (lo, hi) = y_range(100.0, 100.5);
        assert!(lo > 90.0 && lo < 100.0 && hi > 100.5, "{lo} {hi}");
        assert_eq!(y_range(10.0, 100.0).0, 0.0);
        let (lo, hi) = x_range(3.0, 3.0, false);
        assert!(lo < 3.0 && hi > 3.0);
        let (lo, hi) = x_range(0.0, 0.0, false);
        assert!(lo < 0.0 && hi > 0.0);
        let (lo, hi) = x_range(5.0, 5.0, true);
        assert!(lo > 0.0 && lo < 5.0 && hi > 5.0);
    }
}
