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

/// What the x values of a line chart are, for the text of its ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum XKind {
    /// Plain numbers: a log axis labels 500, 1k, 400k, 1M.
    Plain,
    /// Sizes in bytes: a log axis labels 4K, 64K, 1M, 64M (powers of 1024, as caches are named).
    Bytes,
}

/// A tick label of a log axis, each in its own scale (the axis spans decades): 0.5, 20, 400k,
/// 1M; sizes in bytes 512, 4K, 48K, 64M.
pub(super) fn log_tick(v: f64, kind: XKind) -> String {
    let (base, units): (f64, [&str; 4]) = match kind {
        XKind::Plain => (1000.0, ["k", "M", "G", "T"]),
        XKind::Bytes => (1024.0, ["K", "M", "G", "T"]),
    };
    let mut div = 1.0;
    let mut suffix = "";
    for u in units {
        if v.abs() >= div * base {
            div *= base;
            suffix = u;
        }
    }
    if suffix.is_empty() && v != 0.0 && v.abs() < 1e-3 {
        return format!("{v:.0e}");
    }
    let s = format!("{:.2}", v / div);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{suffix}")
}

/// Whether `v` is a round value for a tick: at most three significant digits (16, 128, 1000,
/// 400k), or for sizes a whole number of bytes, K, M or G below 1024 (4K, 48K, 64M).
pub(super) fn is_round(v: f64, kind: XKind) -> bool {
    if !(v.is_finite() && v > 0.0) {
        return false;
    }
    match kind {
        XKind::Plain => {
            let scaled = v / 10f64.powf(v.log10().floor() - 2.0);
            (scaled - scaled.round()).abs() < 1e-6
        }
        XKind::Bytes => {
            let mut q = v;
            while q >= 1024.0 {
                q /= 1024.0;
            }
            q >= 1.0 && q.fract() == 0.0
        }
    }
}

/// The labelled values of a log x axis over `range` (both ends > 0) drawn `px` pixels wide,
/// whose labels (`width(text)` pixels each, centred on their tick) do not overlap: the data's
/// own x values `xs` when they are a few round ones (a speedup plot's 1, 2, 4, 8, 16
/// processors), else the densest set that fits of 1, 2 and 5 per decade, each power of ten,
/// every second (third ...) power of ten, and for sizes every power of two, of four, of 16 ...;
/// a range within one decade falls back to round linear steps. (Labels at the data's x values
/// collided: "398464" beside its neighbour.)
pub(super) fn log_ticks(
    xs: &[f64],
    (lo, hi): (f64, f64),
    kind: XKind,
    px: f64,
    width: &dyn Fn(&str) -> f64,
) -> Vec<f64> {
    let span = (hi / lo).ln();
    let fits = |ticks: &[f64]| {
        let at = |v: f64| px * (v / lo).ln() / span;
        ticks.windows(2).all(|w| {
            let gap = (width(&log_tick(w[0], kind)) + width(&log_tick(w[1], kind))) / 2.0 + 10.0;
            at(w[1]) - at(w[0]) >= gap
        })
    };
    let inside = |v: &f64| *v >= lo * (1.0 - 1e-12) && *v <= hi * (1.0 + 1e-12);
    let mut data: Vec<f64> = xs.iter().copied().filter(inside).collect();
    data.sort_by(f64::total_cmp);
    data.dedup();
    if !data.is_empty() && data.len() <= 12 && data.iter().all(|&v| is_round(v, kind)) && fits(&data) {
        return data;
    }
    let powers = |base: f64, every: i32| -> Vec<f64> {
        let first = (lo.ln() / base.ln()).floor() as i32;
        let last = (hi.ln() / base.ln()).ceil() as i32;
        (first..=last).filter(|e| e.rem_euclid(every) == 0).map(|e| base.powi(e)).filter(inside).collect()
    };
    let mut candidates: Vec<Vec<f64>> = Vec::new();
    if kind == XKind::Bytes {
        candidates.extend([1, 2, 3, 4, 5, 10, 20].map(|every| powers(2.0, every)));
    }
    candidates.push(powers(10.0, 1).into_iter().flat_map(|d| [d, 2.0 * d, 5.0 * d]).filter(inside).collect());
    candidates.extend([1, 2, 3, 4, 6, 12].map(|every| powers(10.0, every)));
    if let Some(ticks) = candidates.into_iter().find(|t| t.len() >= 2 && fits(t)) {
        return ticks;
    }
    // Within about a decade: round linear steps, thinned until they fit.
    let linear: Vec<f64> = nice_ticks(lo, hi, 4).into_iter().filter(|v| *v > 0.0).collect();
    (1..=linear.len().max(1))
        .map(|n| linear.iter().copied().step_by(n).collect::<Vec<f64>>())
        .find(|t| fits(t))
        .unwrap_or_else(|| linear.into_iter().take(1).collect())
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

    /// Label width at 14 px DejaVu Sans: about 9 px a character.
    fn est(s: &str) -> f64 {
        9.0 * s.chars().count() as f64
    }

    /// Pixel positions of `ticks` on a log axis over `range`, `px` wide.
    fn overlap_free(ticks: &[f64], (lo, hi): (f64, f64), kind: XKind, px: f64) -> bool {
        let at = |v: f64| px * (v / lo).ln() / (hi / lo).ln();
        ticks.windows(2).all(|w| at(w[1]) - at(w[0]) >= (est(&log_tick(w[0], kind)) + est(&log_tick(w[1], kind))) / 2.0)
    }

    #[test]
    fn log_ticks_over_a_wide_range_are_round_short_and_apart() {
        // Regression (issue 36, item 8): the ticks of a log axis were the data's x values, so
        // "398464" and its neighbours were printed in full over each other.
        let xs: Vec<f64> = (0..14).map(|k| 10.0 * 1.6f64.powi(k * 3)).collect();
        for (range, px) in
            [((8.0, 2.0e7), 600.0), ((10.0, 398464.0), 600.0), ((3.0, 5.0e9), 300.0), ((1.0, 1e15), 600.0)]
        {
            let ticks = log_ticks(&xs, range, XKind::Plain, px, &est);
            assert!(ticks.len() >= 2, "{range:?}: {ticks:?}");
            assert!(overlap_free(&ticks, range, XKind::Plain, px), "{range:?}: {ticks:?} overlap");
            for t in &ticks {
                let m = t / 10f64.powf(t.log10().floor());
                assert!([1.0, 2.0, 5.0].iter().any(|r| (m - r).abs() < 1e-9), "{t} is not 1, 2 or 5 per decade");
                assert!(log_tick(*t, XKind::Plain).len() <= 4, "{t} printed long: {}", log_tick(*t, XKind::Plain));
            }
        }
        assert_eq!(log_tick(400_000.0, XKind::Plain), "400k");
        assert_eq!(log_tick(1e6, XKind::Plain), "1M");
        assert_eq!(log_tick(20.0, XKind::Plain), "20");
        assert_eq!(log_tick(0.5, XKind::Plain), "0.5");
        // A few round data values are kept (a speedup plot's processor counts).
        assert_eq!(
            log_ticks(&[1.0, 2.0, 4.0, 8.0, 16.0], (0.9, 18.0), XKind::Plain, 600.0, &est),
            [1.0, 2.0, 4.0, 8.0, 16.0]
        );
        // Within a decade: round linear steps.
        let narrow = log_ticks(&[], (310.0, 690.0), XKind::Plain, 600.0, &est);
        assert!(narrow.len() >= 2 && narrow.iter().all(|t| is_round(*t, XKind::Plain)), "{narrow:?}");
    }

    #[test]
    fn a_byte_axis_is_labelled_in_sizes() {
        // Regression (issue 36, item 8): characterize's load-latency axis read 4096 ... 67108864
        // beside a marker "L1 48K".
        let xs: Vec<f64> = (12..=26).map(|k| (1u64 << k) as f64).collect();
        let range = (3600.0, 7.5e7);
        let ticks = log_ticks(&xs, range, XKind::Bytes, 560.0, &est);
        let texts: Vec<String> = ticks.iter().map(|t| log_tick(*t, XKind::Bytes)).collect();
        assert!(texts.iter().any(|t| t == "4K") && texts.iter().any(|t| t == "64M"), "{texts:?}");
        assert!(texts.iter().all(|t| t.len() <= 4), "{texts:?}");
        assert!(overlap_free(&ticks, range, XKind::Bytes, 560.0), "{texts:?}");
        assert_eq!(log_tick(49152.0, XKind::Bytes), "48K");
        assert_eq!(log_tick(1048576.0, XKind::Bytes), "1M");
        assert_eq!(log_tick(512.0, XKind::Bytes), "512");
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
