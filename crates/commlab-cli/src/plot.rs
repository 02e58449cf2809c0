//! Plots: runtime curves and stacked bars, as PNG and SVG; and `commlab plot`, which redraws
//! them from saved results.
//!
//! Two drawing functions other commands call: [`line_chart`] (one curve per series, crossovers
//! marked, optional vertical markers, linear or log x) and [`stacked_bars`] (one bar per item,
//! stacked layers). Each writes `<stem>.png` and `<stem>.svg` of [`SIZE`] pixels, drawn with
//! `plotters`; text is drawn with DejaVu Sans embedded in the binary (`assets/`), so no system
//! font is looked up and the output is the same on every machine. Colours come from a fixed
//! palette in series order, so the same input always gives byte-identical files.
//!
//! Data rules (both functions): non-finite values are skipped (a failed or missing point); an
//! empty chart is an error, as is a log x axis with an x <= 0; a single point or all-zero values
//! still draw (the axes widen around them). Errors are one line of text naming the problem and,
//! for a file, its path.

use crate::crossover::crossovers;
use crate::failure::{input, Failure};
use crate::record::{self, LineError, Numbered, ResultRecord};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Width and height in pixels of every plot (the SVG's view box too).
pub(crate) const SIZE: (u32, u32) = (1000, 640);

/// DejaVu Sans 2.37 (license in `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// One curve.
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical marker on the x axis (e.g. where a real machine sits), drawn as a dashed line with its label.
pub(crate) struct Marker {
    pub x: f64,
    pub label: String,
}

/// A crossover: where variants `a` and `b` change order, drawn as a point with a small label "a/b".
pub(crate) struct Cross {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// A line chart: one curve per series.
pub(crate) struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: &'a [Series],
    pub crossovers: &'a [Cross],
    pub markers: &'a [Marker],
    pub log_x: bool,
}

/// A stacked bar chart.
pub(crate) struct BarChart<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    /// One bar per name.
    pub bars: &'a [String],
    /// Stacked layers, bottom first: (name, value per bar).
    pub layers: &'a [(String, Vec<f64>)],
}

/// Series colours, in order (the "Tableau 10" palette); series beyond ten reuse them with
/// another point shape.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const FAMILY: &str = "sans-serif";
const GRID: RGBColor = RGBColor(225, 225, 225);
const INK: RGBColor = RGBColor(40, 40, 40);
const MARKER_INK: RGBColor = RGBColor(90, 90, 90);

/// Register the embedded font with plotters (once per process).
fn font() -> Result<(), String> {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the embedded plot font could not be loaded".to_string())
    }
}

fn text(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// `<stem>.<ext>` (the stem may itself contain dots).
fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_os_string();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Check that the stem's directory exists, so no drawing starts that cannot be saved.
fn check_dir(stem: &Path) -> Result<(), String> {
    let dir = stem.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if dir.is_dir() {
        Ok(())
    } else {
        Err(format!("cannot write `{}`: its directory does not exist", with_ext(stem, "png").display()))
    }
}

/// Draw into `<stem>.png` with `png` and into `<stem>.svg` with `svg` (the same drawing, on
/// each backend).
fn render(
    stem: &Path,
    png_draw: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<(), String>,
    svg_draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<Vec<PathBuf>, String> {
    font()?;
    check_dir(stem)?;
    let png = with_ext(stem, "png");
    let svg = with_ext(stem, "svg");
    let failed = |p: &Path, e: String| format!("cannot write `{}`: {e}", p.display());
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        png_draw(&root).map_err(|e| failed(&png, e))?;
        root.present().map_err(|e| failed(&png, e.to_string()))?;
    }
    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, SIZE).into_drawing_area();
        svg_draw(&root).map_err(|e| failed(&svg, e))?;
        root.present().map_err(|e| failed(&svg, e.to_string()))?;
    }
    std::fs::write(&svg, svg_text).map_err(|e| failed(&svg, e.to_string()))?;
    Ok(vec![png, svg])
}

/// The k/M/G scale of an axis's tick labels, from its largest magnitude, so every label of
/// an axis uses the same one.
fn tick_scale(lo: f64, hi: f64) -> (f64, &'static str) {
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
fn tick(v: f64, (div, suffix): (f64, &str)) -> String {
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

/// A value printed on a chart (a bar total) or in a message: whole from 100 up, else up to 3 decimals.
fn value(v: f64) -> String {
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
fn y_range(lo: f64, hi: f64) -> (f64, f64) {
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
fn x_range(lo: f64, hi: f64, log: bool) -> (f64, f64) {
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
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A line chart's data, checked: finite points of each series sorted by x, and the ranges.
struct LineData {
    curves: Vec<Vec<(f64, f64)>>,
    x: (f64, f64),
    y: (f64, f64),
}

fn line_data(chart: &LineChart) -> Result<LineData, String> {
    let what = format!("line chart `{}`", chart.title);
    if chart.series.is_empty() {
        return Err(format!("{what}: no series to plot"));
    }
    let curves: Vec<Vec<(f64, f64)>> = chart
        .series
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts
        })
        .collect();
    if curves.iter().all(|c| c.is_empty()) {
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        return Err(format!("{what}: no finite points in any series ({})", names.join(", ")));
    }
    let markers = chart.markers.iter().filter(|m| m.x.is_finite());
    let crosses = chart.crossovers.iter().filter(|c| c.x.is_finite() && c.y.is_finite());
    if chart.log_x {
        for (s, c) in chart.series.iter().zip(&curves) {
            if let Some((x, _)) = c.iter().find(|(x, _)| *x <= 0.0) {
                return Err(format!(
                    "{what}: log x axis, but series `{}` has x = {} (log needs x > 0)",
                    s.name,
                    value(*x)
                ));
            }
        }
        if let Some(m) = markers.clone().find(|m| m.x <= 0.0) {
            return Err(format!(
                "{what}: log x axis, but marker `{}` is at x = {} (log needs x > 0)",
                m.label,
                value(m.x)
            ));
        }
        if let Some(c) = crosses.clone().find(|c| c.x <= 0.0) {
            return Err(format!(
                "{what}: log x axis, but crossover `{}` is at x = {} (log needs x > 0)",
                c.label,
                value(c.x)
            ));
        }
    }
    let xs = curves.iter().flatten().map(|p| p.0).chain(markers.map(|m| m.x)).chain(crosses.clone().map(|c| c.x));
    let (xlo, xhi) = bounds(xs).expect("at least one finite point");
    let (ylo, yhi) = bounds(curves.iter().flatten().map(|p| p.1).chain(crosses.map(|c| c.y))).expect("a finite point");
    Ok(LineData { curves, x: x_range(xlo, xhi, chart.log_x), y: y_range(ylo, yhi) })
}

/// Draw a line chart into `<stem>.png` and `<stem>.svg`; returns both paths.
pub(crate) fn line_chart(stem: &Path, chart: &LineChart) -> Result<Vec<PathBuf>, String> {
    let data = line_data(chart)?;
    render(stem, |r| draw_line(r, chart, &data), |r| draw_line(r, chart, &data))
}

fn draw_line<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &LineChart, d: &LineData) -> Result<(), String> {
    if chart.log_x {
        draw_line_in(root, chart, d, (d.x.0..d.x.1).log_scale())
    } else {
        draw_line_in(root, chart, d, d.x.0..d.x.1)
    }
}

/// A drawing error as text.
fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// The width of the legend panel for these entries.
fn legend_width<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, names: &[&str]) -> u32 {
    let style = text(15.0);
    let widest = names.iter().filter_map(|n| root.estimate_text_size(n, &style).ok()).map(|s| s.0).max().unwrap_or(0);
    (widest + 70).clamp(130, 380)
}

/// One legend entry's swatch.
enum Swatch {
    Line(usize),
    Box(usize),
    Cross,
    Dashed,
}

/// Draw the legend entries top-down in `area` (the panel right of the chart).
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(Swatch, String)]) -> Result<(), String> {
    let (w, _) = area.dim_in_pixel();
    let row = 24;
    let top = 40;
    area.draw(&Text::new("legend", (10, top - 28), text(14.0).color(&MARKER_INK))).map_err(err)?;
    let h = top + row * entries.len() as i32 - 6;
    area.draw(&Rectangle::new([(4, top - 10), (w as i32 - 8, h)], ShapeStyle::from(&GRID).stroke_width(1)))
        .map_err(err)?;
    for (i, (swatch, name)) in entries.iter().enumerate() {
        let y = top + row * i as i32 + 2;
        let (x0, x1) = (12, 40);
        match swatch {
            Swatch::Line(k) => {
                let c = colour(*k);
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2))).map_err(err)?;
                draw_point(area, *k, (x0 + x1) / 2, y)?;
            }
            Swatch::Box(k) => {
                area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], colour(*k).filled())).map_err(err)?;
            }
            Swatch::Cross => {
                draw_cross(area, (x0 + x1) / 2, y)?;
            }
            Swatch::Dashed => {
                for s in (x0..x1).step_by(8) {
                    area.draw(&PathElement::new(vec![(s, y), ((s + 4).min(x1), y)], MARKER_INK.stroke_width(2)))
                        .map_err(err)?;
                }
            }
        }
        area.draw(&Text::new(name.clone(), (x1 + 8, y), text(15.0).pos(Pos::new(HPos::Left, VPos::Center))))
            .map_err(err)?;
    }
    Ok(())
}

/// Draw the point shape of series `k` at a pixel: circle, triangle, square, diamond (by k / 10).
fn draw_point<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, k: usize, x: i32, y: i32) -> Result<(), String> {
    let style = colour(k).filled();
    let s = 4;
    let at = EmptyElement::at((x, y));
    match (k / PALETTE.len()) % 4 {
        0 => area.draw(&(at + Circle::new((0, 0), s, style))),
        1 => area.draw(&(at + TriangleMarker::new((0, 0), s + 1, style))),
        2 => area.draw(&(at + Rectangle::new([(-s, -s), (s, s)], style))),
        _ => area.draw(&(at + Polygon::new(vec![(0, -s - 1), (s + 1, 0), (0, s + 1), (-s - 1, 0)], style))),
    }
    .map_err(err)
}

/// Draw the crossover mark at a pixel: a black ring around a black dot.
fn draw_cross<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, x: i32, y: i32) -> Result<(), String> {
    let mark = EmptyElement::at((x, y))
        + Circle::new((0, 0), 7, BLACK.stroke_width(2))
        + Circle::new((0, 0), 3, BLACK.filled());
    area.draw(&mark).map_err(err)
}

fn draw_line_in<DB, XR>(root: &DrawingArea<DB, Shift>, chart: &LineChart, d: &LineData, xr: XR) -> Result<(), String>
where
    DB: DrawingBackend,
    XR: AsRangedCoord<Value = f64>,
    XR::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    root.fill(&WHITE).map_err(err)?;
    let body = root.margin(8, 0, 0, 0).titled(chart.title, text(22.0)).map_err(err)?;
    let mut entries: Vec<(Swatch, String)> = chart
        .series
        .iter()
        .zip(&d.curves)
        .enumerate()
        .map(|(k, (s, c))| {
            (Swatch::Line(k), if c.is_empty() { format!("{} (no data)", s.name) } else { s.name.clone() })
        })
        .collect();
    if !chart.crossovers.is_empty() {
        entries.push((Swatch::Cross, "crossover".to_string()));
    }
    if !chart.markers.is_empty() {
        entries.push((Swatch::Dashed, "marker".to_string()));
    }
    let names: Vec<&str> = entries.iter().map(|e| e.1.as_str()).collect();
    let (plot_area, legend_area) = body.split_horizontally(SIZE.0 - legend_width(root, &names));
    draw_legend(&legend_area.margin(30, 0, 0, 6), &entries)?;

    let mut c = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(xr, d.y.0..d.y.1)
        .map_err(err)?;
    let (xs, ys) = (if chart.log_x { (1.0, "") } else { tick_scale(d.x.0, d.x.1) }, tick_scale(d.y.0, d.y.1));
    c.configure_mesh()
        .light_line_style(GRID.mix(0.5))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .axis_desc_style(text(17.0))
        .label_style(text(14.0))
        .x_labels(10)
        .y_labels(8)
        .x_label_formatter(&|v| tick(*v, xs))
        .y_label_formatter(&|v| tick(*v, ys))
        .draw()
        .map_err(err)?;

    // Markers first, so curves draw over them.
    let (ylo, yhi) = d.y;
    let mut markers: Vec<&Marker> = chart.markers.iter().filter(|m| m.x.is_finite()).collect();
    markers.sort_by(|a, b| a.x.total_cmp(&b.x));
    for (i, m) in markers.iter().enumerate() {
        c.draw_series(DashedLineSeries::new(vec![(m.x, ylo), (m.x, yhi)], 6, 4, MARKER_INK.stroke_width(1)))
            .map_err(err)?;
        let (px, py) = c.backend_coord(&(m.x, yhi));
        // Labels step down so neighbouring markers' labels do not overlap.
        let y = py + 4 + 16 * (i % 6) as i32;
        root.draw(&Text::new(m.label.clone(), (px + 4, y), text(13.0).color(&MARKER_INK))).map_err(err)?;
    }
    for (k, pts) in d.curves.iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        c.draw_series(LineSeries::new(path(pts, chart.log_x), colour(k).stroke_width(2))).map_err(err)?;
        for &(x, y) in pts {
            let (px, py) = c.backend_coord(&(x, y));
            draw_point(root, k, px, py)?;
        }
    }
    // Crossover labels: the first free place of a few around the mark.
    let mut taken: Vec<(i32, i32, i32, i32)> = Vec::new();
    let style = text(13.0);
    for x in chart.crossovers.iter().filter(|x| x.x.is_finite() && x.y.is_finite()) {
        let (px, py) = c.backend_coord(&(x.x, x.y));
        draw_cross(root, px, py)?;
        let (w, h) = root.estimate_text_size(&x.label, &style).map_err(err)?;
        let (w, h) = (w as i32, h as i32 + 2);
        let places = [(9, -22), (9, 8), (-9 - w, -22), (-9 - w, 8), (9, -22 - h), (9, 8 + h), (-9 - w, -22 - h)];
        let free = |r: (i32, i32, i32, i32)| !taken.iter().any(|t| r.0 < t.2 && t.0 < r.2 && r.1 < t.3 && t.1 < r.3);
        let rect = |(dx, dy): (i32, i32)| (px + dx, py + dy, px + dx + w, py + dy + h);
        let at = places.iter().map(|p| rect(*p)).find(|r| free(*r)).unwrap_or_else(|| rect(places[0]));
        taken.push(at);
        root.draw(&Rectangle::new([(at.0 - 1, at.1 - 1), (at.2 + 1, at.3 - 1)], WHITE.mix(0.75).filled()))
            .map_err(err)?;
        root.draw(&Text::new(x.label.clone(), (at.0, at.1), style.clone())).map_err(err)?;
    }
    Ok(())
}

/// The points a curve is drawn through: its samples, and on a log x axis also points between
/// them, so that each segment shows the straight line in x along which crossovers are
/// interpolated (and the crossover marks sit on the curves).
fn path(pts: &[(f64, f64)], log_x: bool) -> Vec<(f64, f64)> {
    if !log_x {
        return pts.to_vec();
    }
    let mut out = Vec::new();
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        for i in 0..32 {
            let t = i as f64 / 32.0;
            out.push((x0 + t * (x1 - x0), y0 + t * (y1 - y0)));
        }
    }
    out.extend(pts.last());
    out
}

/// A bar chart's data, checked: per bar, the stacked segments (layer, from, to); the y range.
struct BarData {
    stacks: Vec<Vec<(usize, f64, f64)>>,
    totals: Vec<f64>,
    y: (f64, f64),
}

fn bar_data(chart: &BarChart) -> Result<BarData, String> {
    let what = format!("bar chart `{}`", chart.title);
    if chart.bars.is_empty() {
        return Err(format!("{what}: no bars to plot"));
    }
    if chart.layers.is_empty() {
        return Err(format!("{what}: no layers to stack"));
    }
    for (name, values) in chart.layers {
        if values.len() != chart.bars.len() {
            return Err(format!(
                "{what}: layer `{name}` has {} values for {} bars ({})",
                values.len(),
                chart.bars.len(),
                chart.bars.join(", ")
            ));
        }
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| **v < 0.0) {
            return Err(format!("{what}: layer `{name}` is negative ({}) at bar `{}`", value(*v), chart.bars[i]));
        }
    }
    let mut stacks = Vec::new();
    let mut totals = Vec::new();
    for i in 0..chart.bars.len() {
        let mut base = 0.0;
        let mut stack = Vec::new();
        for (l, (_, values)) in chart.layers.iter().enumerate() {
            let v = values[i];
            if v.is_finite() && v > 0.0 {
                stack.push((l, base, base + v));
                base += v;
            }
        }
        stacks.push(stack);
        totals.push(base);
    }
    let any = chart.layers.iter().any(|(_, v)| v.iter().any(|v| v.is_finite()));
    if !any {
        return Err(format!("{what}: no finite values in any layer"));
    }
    let top = totals.iter().copied().fold(0.0, f64::max);
    let y = if top > 0.0 { (0.0, top * 1.12) } else { (0.0, 1.0) };
    Ok(BarData { stacks, totals, y })
}

/// Draw stacked bars into `<stem>.png` and `<stem>.svg`; returns both paths.
pub(crate) fn stacked_bars(stem: &Path, chart: &BarChart) -> Result<Vec<PathBuf>, String> {
    let data = bar_data(chart)?;
    render(stem, |r| draw_bars(r, chart, &data), |r| draw_bars(r, chart, &data))
}

fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &BarChart, d: &BarData) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let body = root.margin(8, 0, 0, 0).titled(chart.title, text(22.0)).map_err(err)?;
    // Legend top-down as the layers stack, top layer first.
    let entries: Vec<(Swatch, String)> =
        chart.layers.iter().enumerate().rev().map(|(l, (name, _))| (Swatch::Box(l), name.clone())).collect();
    let names: Vec<&str> = entries.iter().map(|e| e.1.as_str()).collect();
    let (plot_area, legend_area) = body.split_horizontally(SIZE.0 - legend_width(root, &names));
    draw_legend(&legend_area.margin(30, 0, 0, 6), &entries)?;

    let n = chart.bars.len() as f64;
    let mut c = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .build_cartesian_2d(-0.5..n - 0.5, d.y.0..d.y.1)
        .map_err(err)?;
    let ys = tick_scale(d.y.0, d.y.1);
    c.configure_mesh()
        .disable_x_mesh()
        .light_line_style(GRID.mix(0.5))
        .bold_line_style(GRID)
        .axis_style(INK)
        .x_labels(0)
        .y_desc(chart.y_label)
        .axis_desc_style(text(17.0))
        .label_style(text(14.0))
        .y_labels(8)
        .y_label_formatter(&|v| tick(*v, ys))
        .draw()
        .map_err(err)?;
    let half = 0.34;
    for (i, stack) in d.stacks.iter().enumerate() {
        let x = i as f64;
        for &(l, lo, hi) in stack {
            c.draw_series(std::iter::once(Rectangle::new([(x - half, lo), (x + half, hi)], colour(l).filled())))
                .map_err(err)?;
        }
        let (px, py) = c.backend_coord(&(x, 0.0));
        root.draw(&Text::new(chart.bars[i].clone(), (px, py + 8), text(15.0).pos(Pos::new(HPos::Center, VPos::Top))))
            .map_err(err)?;
        let (tx, ty) = c.backend_coord(&(x, d.totals[i]));
        root.draw(&Text::new(value(d.totals[i]), (tx, ty - 4), text(13.0).pos(Pos::new(HPos::Center, VPos::Bottom))))
            .map_err(err)?;
    }
    Ok(())
}

// ───────────────────────────── `commlab plot` ─────────────────────────────

/// `commlab plot --help`.
pub const LONG_ABOUT: &str = "Draw a plot (PNG and SVG) from saved results: the results.jsonl of `commlab sweep`, \
or for breakdown and volume also the output of `commlab run --json`.\n\n\
KIND is one of:\n  \
runtime     cycles vs the swept key, one curve per variant, crossovers (where two variants change order) \
marked; needs sweep results\n  \
breakdown   stacked bars of the mean time per processor in compute, memory & NI wait, message overhead \
and synchronization, one bar per variant\n  \
volume      stacked bars of the traffic in bytes by class (invalidates, requests, headers, data, \
cross-traffic), one bar per variant\n\n\
The x axis is the varied key; when the sweep varied several keys, pick it with --x (a key varied over one \
value does not count). One chart is drawn per combination of the other varied keys: DIR/KIND.png and \
DIR/KIND.svg when there is one combination, else DIR/KIND-KEY=VALUE,....png/.svg. breakdown and volume show \
the runs at one x of a sweep: --at VALUE, by default the smallest x; with plain `run --json` output they show \
every run (one bar per variant). runtime uses a log x axis when the x values are positive and geometrically \
spaced over a factor of 20 or more (override with --x-scale). The y axis starts at 0 unless the values span \
less than a tenth of the largest. Paths written are printed, one per line.\n\n\
Examples:\n  \
commlab plot runtime sweep-em3d/results.jsonl\n  \
commlab plot breakdown sweep-em3d/results.jsonl --at 100 --out plots\n  \
commlab plot runtime em3d-grid/results.jsonl --x nodes --mark alewife=18 --x-scale linear\n  \
commlab run em3d --variant all --json --out em3d.jsonl && commlab plot volume em3d.jsonl";

#[derive(clap::Args)]
pub struct PlotArgs {
    /// What to draw: runtime, breakdown or volume.
    pub(crate) kind: String,
    /// Results file: results.jsonl of `commlab sweep`, or `commlab run --json` output.
    pub(crate) results: PathBuf,
    /// The varied key for the x axis (needed when several keys were varied).
    #[arg(long, value_name = "KEY")]
    pub(crate) x: Option<String>,
    /// breakdown and volume: the x value whose runs are drawn [default: the smallest].
    #[arg(long, value_name = "VALUE")]
    pub(crate) at: Option<f64>,
    /// Directory for the plots [default: the results file's directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// runtime: x axis scale.
    #[arg(long, value_name = "SCALE", default_value = "auto", value_parser = ["auto", "linear", "log"])]
    pub(crate) x_scale: String,
    /// runtime: a labelled vertical line at x, e.g. alewife=18 (repeatable).
    #[arg(long = "mark", value_name = "LABEL=X")]
    pub(crate) mark: Vec<String>,
}

/// `commlab plot`: draw, then print the paths written.
pub fn run(args: PlotArgs) -> Result<(), Failure> {
    for p in draw(&args)? {
        println!("{}", p.display());
    }
    Ok(())
}

const KINDS: &str = "runtime, breakdown, volume";

/// Read a results file: one record per non-blank line, each with a "variant".
fn read_results(path: &Path) -> Result<Vec<Numbered>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        input(format!(
            "cannot read results file `{}`: {e} (give the results.jsonl of `commlab sweep` or the output of `commlab run --json`)",
            path.display()
        ))
    })?;
    let out = record::read_records(&text).map_err(|bad| match bad.error {
        LineError::NotJson(e) => input(format!(
            "`{}` line {}: not valid JSON ({e}); expected one result object per line",
            path.display(),
            bad.line
        )),
        LineError::NoVariant => input(format!(
            "`{}` line {}: not a commlab result (no \"variant\"); expected lines of `commlab sweep` results.jsonl or `commlab run --json`",
            path.display(),
            bad.line
        )),
        LineError::NotRecord(e) => input(format!(
            "`{}` line {}: not a commlab result ({e}); expected lines of `commlab sweep` results.jsonl or `commlab run --json`",
            path.display(),
            bad.line
        )),
    })?;
    if out.is_empty() {
        return Err(input(format!("`{}` holds no results", path.display())));
    }
    Ok(out)
}

/// Compare JSON values: numbers by value, anything else by its text.
fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

/// A value as shown in titles and file names: strings without quotes.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map(value).unwrap_or_else(|| n.to_string()),
        other => other.to_string(),
    }
}

/// Variants in the app's own order (as `--variant all` runs them), then any others by name.
fn variant_order(app: &str, recs: &[&Numbered]) -> Vec<String> {
    let names: BTreeSet<&str> = recs.iter().map(|r| r.record.variant.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    if let Ok(info) = commlab_apps::app_info(app) {
        out.extend(info.variants.iter().filter(|v| names.contains(**v)).map(|v| v.to_string()));
    }
    let rest: Vec<String> = names.iter().filter(|n| !out.iter().any(|o| o == *n)).map(|n| n.to_string()).collect();
    out.extend(rest);
    out
}

/// The value `f` gives every record, if they share one (`f` gives `None` for a record
/// that lacks the field).
fn common<T: PartialEq>(recs: &[&Numbered], f: impl Fn(&ResultRecord) -> Option<T>) -> Option<T> {
    let first = f(&recs.first()?.record)?;
    recs.iter().all(|r| f(&r.record).as_ref() == Some(&first)).then_some(first)
}

/// "app" and "(machine, N procs, extra)" for titles. (A hand-written line may lack the app,
/// machine or processor count; they read as empty and are left out.)
fn context(recs: &[&Numbered], extra: &[String]) -> (String, String) {
    let text = |s: &String| (!s.is_empty()).then(|| s.clone());
    let app = common(recs, |r| text(&r.app)).unwrap_or_else(|| "results".to_string());
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = common(recs, |r| text(&r.machine)) {
        parts.push(m);
    }
    if let Some(p) = common(recs, |r| (r.procs > 0).then_some(r.procs)) {
        parts.push(format!("{} procs", value(p as f64)));
    }
    parts.extend(extra.iter().cloned());
    (app, if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) })
}

/// The records of a sweep split by the x key: the key, and per combination of the other varied
/// keys (ordered by their values) its description and records.
/// The values of the varied keys other than x, in key order.
type Fixed = Vec<(String, Value)>;

struct Sweep<'a> {
    x: String,
    groups: Vec<(Fixed, Vec<&'a Numbered>)>,
}

fn split_sweep<'a>(path: &Path, recs: &'a [Numbered], want_x: Option<&str>) -> Result<Sweep<'a>, Failure> {
    let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in recs {
        let vary = r.record.vary.as_ref().ok_or_else(|| {
            input(format!(
                "`{}` line {}: no \"vary\" object; runtime plots need the results.jsonl of `commlab sweep`",
                path.display(),
                r.line
            ))
        })?;
        for (k, v) in vary {
            values.entry(k.clone()).or_default().insert(v.to_string());
        }
    }
    let keys: Vec<&String> = values.keys().collect();
    let list = || keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
    let x = match want_x {
        Some(x) if values.contains_key(x) => x.to_string(),
        Some(x) => {
            return Err(input(format!("--x `{x}`: not a key varied in `{}` (varied: {})", path.display(), list())))
        }
        None => {
            let varied: Vec<&String> = keys.iter().copied().filter(|k| values[*k].len() > 1).collect();
            let candidates = if varied.is_empty() { keys.clone() } else { varied };
            match candidates.as_slice() {
                [one] => one.to_string(),
                [] => return Err(input(format!("`{}`: the \"vary\" objects are empty: no x axis", path.display()))),
                several => {
                    let names: Vec<&str> = several.iter().map(|k| k.as_str()).collect();
                    return Err(input(format!(
                        "`{}`: several keys were varied ({}): pick the x axis with --x KEY",
                        path.display(),
                        names.join(", ")
                    )));
                }
            }
        }
    };
    let mut groups: Vec<(Fixed, Vec<&Numbered>)> = Vec::new();
    for r in recs {
        let vary = r.record.vary.as_ref().expect("checked above");
        match vary.get(&x) {
            Some(v) if v.as_f64().is_some_and(f64::is_finite) => {}
            Some(v) => {
                return Err(input(format!(
                    "`{}` line {}: no numeric x: `{x}` is {v} (the x axis needs numbers; pick another key with --x)",
                    path.display(),
                    r.line
                )))
            }
            None => {
                return Err(input(format!(
                    "`{}` line {}: no numeric x: `{x}` is not in its \"vary\"",
                    path.display(),
                    r.line
                )))
            }
        }
        let fixed: Fixed = vary.iter().filter(|(k, _)| **k != x).map(|(k, v)| (k.clone(), v.clone())).collect();
        match groups.iter_mut().find(|(f, _)| *f == fixed) {
            Some((_, g)) => g.push(r),
            None => groups.push((fixed, vec![r])),
        }
    }
    groups.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .map(|((ka, va), (kb, vb))| ka.cmp(kb).then(cmp_values(va, vb)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Ok(Sweep { x, groups })
}

fn x_of(r: &Numbered, x: &str) -> f64 {
    r.record.vary_number(x)
}

/// The x axis label: the key and its unit (a machine key) or whose parameter it is.
fn x_label(key: &str, app: &str) -> String {
    if let Some(doc) = commlab_sim::machine::key_doc(key) {
        return format!("{key} ({})", doc.unit);
    }
    match commlab_apps::app_info(app) {
        Ok(info) if info.params.iter().any(|p| p.name == key) => format!("{key} ({app} parameter)"),
        _ => key.to_string(),
    }
}

/// Log x when every x is positive and the values are spread geometrically over a factor of 20
/// or more (their log-spacing more even than their linear spacing).
fn auto_log(xs: &[f64]) -> bool {
    let mut xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 2 || xs[0] <= 0.0 || xs[xs.len() - 1] / xs[0] < 20.0 {
        return false;
    }
    if xs.len() == 2 {
        return xs[1] / xs[0] >= 100.0;
    }
    let spread = |d: Vec<f64>| {
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        (d.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / d.len() as f64).sqrt() / mean
    };
    let lin = spread(xs.windows(2).map(|w| w[1] - w[0]).collect());
    let log = spread(xs.windows(2).map(|w| (w[1] / w[0]).ln()).collect());
    log < lin
}

/// A file-name-safe form of `k=v,...`.
fn file_part(fixed: &[(String, Value)]) -> String {
    let s: Vec<String> = fixed.iter().map(|(k, v)| format!("{k}={}", show(v))).collect();
    s.join(",").chars().map(|c| if c.is_ascii_alphanumeric() || "._=,-+".contains(c) { c } else { '_' }).collect()
}

fn stem(dir: &Path, kind: &str, fixed: &[(String, Value)], several: bool) -> PathBuf {
    if several {
        dir.join(format!("{kind}-{}", file_part(fixed)))
    } else {
        dir.join(kind)
    }
}

fn fixed_desc(fixed: &[(String, Value)]) -> Vec<String> {
    fixed.iter().map(|(k, v)| format!("{k}={}", show(v))).collect()
}

fn parse_marks(marks: &[String]) -> Result<Vec<Marker>, Failure> {
    marks
        .iter()
        .map(|m| {
            let (label, x) =
                m.rsplit_once('=').ok_or_else(|| input(format!("--mark `{m}`: expected LABEL=X, e.g. alewife=18")))?;
            let x: f64 = x
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| input(format!("--mark `{m}`: `{}` is not a number (expected LABEL=X)", x.trim())))?;
            Ok(Marker { x, label: label.trim().to_string() })
        })
        .collect()
}

/// Draw what `args` asks for; returns the paths written.
pub(crate) fn draw(args: &PlotArgs) -> Result<Vec<PathBuf>, Failure> {
    if !["runtime", "breakdown", "volume"].contains(&args.kind.as_str()) {
        return Err(input(format!("unknown plot kind `{}` (valid: {KINDS})", args.kind)));
    }
    let markers = parse_marks(&args.mark)?;
    if !markers.is_empty() && args.kind != "runtime" {
        return Err(input(format!("--mark applies to runtime plots, not {}", args.kind)));
    }
    let recs = read_results(&args.results)?;
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => args.results.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf(),
    };
    if dir.exists() && !dir.is_dir() {
        return Err(input(format!("cannot write plots to `{}`: it is not a directory", dir.display())));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| input(format!("cannot write plots to `{}`: cannot create the directory: {e}", dir.display())))?;
    match args.kind.as_str() {
        "runtime" => runtime(args, &recs, &dir, &markers),
        kind => bars(args, kind, &recs, &dir),
    }
}

fn runtime(args: &PlotArgs, recs: &[Numbered], dir: &Path, markers: &[Marker]) -> Result<Vec<PathBuf>, Failure> {
    let sweep = split_sweep(&args.results, recs, args.x.as_deref())?;
    let several = sweep.groups.len() > 1;
    let mut written = Vec::new();
    for (fixed, group) in &sweep.groups {
        let (app, ctx) = context(group, &fixed_desc(fixed));
        let variants = variant_order(&app, group);
        let series: Vec<Series> = variants
            .iter()
            .map(|v| {
                let mut points: Vec<(f64, f64)> = Vec::new();
                for r in group.iter().filter(|r| r.record.variant == *v) {
                    let x = x_of(r, &sweep.x);
                    if !points.iter().any(|p| p.0 == x) {
                        points.push((x, r.record.cycles));
                    }
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series { name: v.clone(), points }
            })
            .collect();
        let curves: Vec<(String, Vec<(f64, f64)>)> =
            series.iter().map(|s| (s.name.clone(), s.points.clone())).collect();
        let crosses: Vec<Cross> = crossovers(&curves)
            .into_iter()
            .map(|c| Cross { x: c.x, y: c.y, label: format!("{}/{}", c.a, c.b) })
            .collect();
        let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
        let log_x = match args.x_scale.as_str() {
            "log" => true,
            "linear" => false,
            _ => auto_log(&xs),
        };
        let title = format!("{app}: runtime vs {}{ctx}", sweep.x);
        let xl = x_label(&sweep.x, &app);
        let chart = LineChart {
            title: &title,
            x_label: &xl,
            y_label: "runtime (processor cycles)",
            series: &series,
            crossovers: &crosses,
            markers,
            log_x,
        };
        written.extend(line_chart(&stem(dir, "runtime", fixed, several), &chart).map_err(input)?);
    }
    Ok(written)
}

/// The stacked quantities of a bar plot kind: JSON object, y label, (field, legend name) bottom first.
fn layers_of(kind: &str) -> (&'static str, &'static str, &'static str, &'static [(&'static str, &'static str)]) {
    if kind == "breakdown" {
        (
            "breakdown",
            "time per processor by category",
            "mean time per processor (processor cycles)",
            &[
                ("compute", "compute"),
                ("memory_ni_wait", "memory & NI wait"),
                ("message_overhead", "message overhead"),
                ("synchronization", "synchronization"),
            ],
        )
    } else {
        (
            "volume_bytes",
            "network traffic by class",
            "traffic volume (bytes)",
            &[
                ("invalidates", "invalidates"),
                ("requests", "requests"),
                ("headers", "headers"),
                ("data", "data"),
                ("cross_traffic", "cross-traffic"),
            ],
        )
    }
}

/// Bar names for plain results: the variant, with more of the run's identity where needed to
/// tell bars apart.
fn bar_names(recs: &[&Numbered]) -> Vec<String> {
    let unique = |names: &[String]| names.iter().collect::<BTreeSet<_>>().len() == names.len();
    let mut names: Vec<String> = recs.iter().map(|r| r.record.variant.clone()).collect();
    let steps: [&dyn Fn(&Numbered) -> String; 4] = [
        &|r| format!("{} {}", r.record.app, r.record.variant),
        &|r| format!("{} {} @{}", r.record.app, r.record.variant, r.record.machine),
        &|r| format!("{} {} @{} {}p", r.record.app, r.record.variant, r.record.machine, value(r.record.procs as f64)),
        &|r| format!("{} #{}", r.record.variant, r.line),
    ];
    for step in steps {
        if unique(&names) {
            break;
        }
        names = recs.iter().map(|r| step(r)).collect();
    }
    names
}

fn bars(args: &PlotArgs, kind: &str, recs: &[Numbered], dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let (field, what, y_label, layers) = layers_of(kind);
    let swept = recs.iter().filter(|r| r.record.vary.is_some()).count();
    if swept != 0 && swept != recs.len() {
        let plain = recs.iter().find(|r| r.record.vary.is_none()).expect("some plain line");
        return Err(input(format!(
            "`{}` line {}: no \"vary\" object, but other lines have one: mixed sweep and run results",
            args.results.display(),
            plain.line
        )));
    }
    // (fixed keys, records to draw, extra title parts)
    let mut charts: Vec<(Fixed, Vec<&Numbered>, Vec<String>)> = Vec::new();
    if swept == 0 {
        if args.x.is_some() || args.at.is_some() {
            return Err(input(format!(
                "--x and --at pick a point of a sweep, but `{}` holds plain run results (no \"vary\")",
                args.results.display()
            )));
        }
        charts.push((Vec::new(), recs.iter().collect(), Vec::new()));
    } else {
        let sweep = split_sweep(&args.results, recs, args.x.as_deref())?;
        for (fixed, group) in sweep.groups {
            let mut xs: Vec<f64> = group.iter().map(|r| x_of(r, &sweep.x)).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            let at = match args.at {
                None => xs[0],
                Some(a) => *xs.iter().find(|x| (**x - a).abs() <= 1e-9 * a.abs().max(1e-300)).ok_or_else(|| {
                    let have: Vec<String> = xs.iter().map(|x| value(*x)).collect();
                    input(format!(
                        "--at {}: no runs at {}={} in `{}`{} (x values: {})",
                        value(a),
                        sweep.x,
                        value(a),
                        args.results.display(),
                        if fixed.is_empty() { String::new() } else { format!(" for {}", fixed_desc(&fixed).join(" ")) },
                        have.join(", ")
                    ))
                })?,
            };
            let mut chosen: Vec<&Numbered> = Vec::new();
            for r in group.iter().filter(|r| x_of(r, &sweep.x) == at) {
                if !chosen.iter().any(|c| c.record.variant == r.record.variant) {
                    chosen.push(r);
                }
            }
            let mut extra = fixed_desc(&fixed);
            extra.push(format!("{}={}", sweep.x, value(at)));
            charts.push((fixed, chosen, extra));
        }
    }
    let several = charts.len() > 1;
    let mut written = Vec::new();
    for (fixed, mut chosen, extra) in charts {
        let (app, ctx) = context(&chosen, &extra);
        // Order bars by the app's variant order (stable for equal variants: file order).
        let order = variant_order(&app, &chosen);
        chosen.sort_by_key(|r| order.iter().position(|v| *v == r.record.variant));
        let names = bar_names(&chosen);
        let stacked: Vec<(String, Vec<f64>)> = layers
            .iter()
            .map(|(key, name)| {
                let of = |r: &ResultRecord| match field {
                    "breakdown" => r.breakdown.get(*key).copied().unwrap_or(f64::NAN),
                    _ => r.volume_bytes.get(*key).map_or(f64::NAN, |b| *b as f64),
                };
                (name.to_string(), chosen.iter().map(|r| of(&r.record)).collect())
            })
            .collect();
        let title = format!("{app}: {what}{ctx}");
        let chart = BarChart { title: &title, y_label, bars: &names, layers: &stacked };
        written.extend(stacked_bars(&stem(dir, kind, &fixed, several), &chart).map_err(input)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

    /// A fresh directory under the system temp directory.
    fn tmp(name: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
        let d = std::env::temp_dir().join(format!("commlab-plot-unit-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn series(name: &str, pts: &[(f64, f64)]) -> Series {
        Series { name: name.to_string(), points: pts.to_vec() }
    }

    fn chart<'a>(series: &'a [Series], crossovers: &'a [Cross], markers: &'a [Marker], log_x: bool) -> LineChart<'a> {
        LineChart {
            title: "test: runtime",
            x_label: "overhead (cycles)",
            y_label: "runtime (processor cycles)",
            series,
            crossovers,
            markers,
            log_x,
        }
    }

    fn is_png(p: &Path) -> bool {
        std::fs::read(p).unwrap().starts_with(b"\x89PNG\r\n\x1a\n")
    }

    #[test]
    fn line_chart_writes_png_and_svg_with_every_label() {
        let d = tmp("line");
        let s = [series("sm", &[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]), series("mp", &[(1.0, 25.0), (3.0, 5.0)])];
        let x = [Cross { x: 2.0, y: 17.5, label: "sm/mp".into() }];
        let m = [Marker { x: 2.5, label: "alewife".into() }];
        let paths = line_chart(&d.join("rt"), &chart(&s, &x, &m, false)).unwrap();
        assert_eq!(paths, vec![d.join("rt.png"), d.join("rt.svg")]);
        assert!(is_png(&paths[0]));
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        for needle in [
            "test: runtime",
            "overhead (cycles)",
            "runtime (processor cycles)",
            "\nsm\n",
            "\nmp\n",
            "sm/mp",
            "alewife",
            "legend",
            "crossover",
        ] {
            assert!(svg.contains(needle), "svg lacks {needle}");
        }
    }

    #[test]
    fn edge_cases_draw_or_fail_cleanly() {
        let d = tmp("edges");
        // One point; all zero; NaN and infinity skipped; an empty series among others.
        let one = [series("a", &[(5.0, 7.0)])];
        line_chart(&d.join("one"), &chart(&one, &[], &[], false)).unwrap();
        line_chart(&d.join("one-log"), &chart(&one, &[], &[], true)).unwrap();
        let zero = [series("a", &[(0.0, 0.0), (1.0, 0.0)]), series("b", &[(0.0, 0.0)])];
        line_chart(&d.join("zero"), &chart(&zero, &[], &[], false)).unwrap();
        let nan = [series("a", &[(1.0, f64::NAN), (2.0, 3.0), (f64::INFINITY, 1.0)]), series("b", &[])];
        line_chart(&d.join("nan"), &chart(&nan, &[], &[], false)).unwrap();
        let svg = std::fs::read_to_string(d.join("nan.svg")).unwrap();
        assert!(svg.contains("b (no data)"));

        let e = line_chart(&d.join("x"), &chart(&[], &[], &[], false)).unwrap_err();
        assert!(e.contains("no series"), "{e}");
        let empty = [series("a", &[]), series("b", &[(1.0, f64::NAN)])];
        let e = line_chart(&d.join("x"), &chart(&empty, &[], &[], false)).unwrap_err();
        assert!(e.contains("no finite points") && e.contains("a, b"), "{e}");
        let nonpos = [series("a", &[(0.0, 1.0), (10.0, 2.0)])];
        let e = line_chart(&d.join("x"), &chart(&nonpos, &[], &[], true)).unwrap_err();
        assert!(e.contains("log") && e.contains("`a`"), "{e}");
        let m = [Marker { x: -1.0, label: "t3d".into() }];
        let e = line_chart(&d.join("x"), &chart(&one, &[], &m, true)).unwrap_err();
        assert!(e.contains("marker `t3d`"), "{e}");
        let e = line_chart(&d.join("missing-dir").join("x"), &chart(&one, &[], &[], false)).unwrap_err();
        assert!(e.contains("missing-dir") && e.contains("directory does not exist"), "{e}");
        assert!(!d.join("x.png").exists());
    }

    #[test]
    fn renders_are_byte_identical() {
        let d = tmp("det");
        let s = [series("a", &[(1.0, 3.0), (10.0, 30.0), (100.0, 20.0)]), series("b", &[(1.0, 9.0), (100.0, 9.0)])];
        let a = line_chart(&d.join("a"), &chart(&s, &[], &[], true)).unwrap();
        let b = line_chart(&d.join("b"), &chart(&s, &[], &[], true)).unwrap();
        for (p, q) in a.iter().zip(&b) {
            assert_eq!(std::fs::read(p).unwrap(), std::fs::read(q).unwrap(), "{} vs {}", p.display(), q.display());
        }
    }

    #[test]
    fn stacked_bars_draw_and_check_their_input() {
        let d = tmp("bars");
        let bars: Vec<String> = ["sm", "mp-int", "bulk"].map(String::from).to_vec();
        let layers = vec![
            ("compute".to_string(), vec![10.0, 12.0, 0.0]),
            ("wait".to_string(), vec![5.0, f64::NAN, 0.0]),
            ("sync".to_string(), vec![1.0, 2.0, 0.0]),
        ];
        let c = BarChart { title: "test: breakdown", y_label: "cycles", bars: &bars, layers: &layers };
        let paths = stacked_bars(&d.join("b"), &c).unwrap();
        assert!(is_png(&paths[0]));
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        for needle in [
            "test: breakdown",
            "\ncycles\n",
            "\nsm\n",
            "\nmp-int\n",
            "\nbulk\n",
            "\ncompute\n",
            "\nwait\n",
            "\nsync\n",
            "\n16\n",
        ] {
            assert!(svg.contains(needle), "svg lacks {needle}");
        }
        let zeros = vec![("compute".to_string(), vec![0.0, 0.0, 0.0])];
        stacked_bars(&d.join("z"), &BarChart { layers: &zeros, ..c }).unwrap();

        let short = vec![("compute".to_string(), vec![1.0])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &short, ..c }).unwrap_err();
        assert!(e.contains("1 values for 3 bars"), "{e}");
        let neg = vec![("compute".to_string(), vec![1.0, -2.0, 0.0])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &neg, ..c }).unwrap_err();
        assert!(e.contains("negative") && e.contains("mp-int"), "{e}");
        let e = stacked_bars(&d.join("x"), &BarChart { bars: &[], layers: &[], ..c }).unwrap_err();
        assert!(e.contains("no bars"), "{e}");
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &[], ..c }).unwrap_err();
        assert!(e.contains("no layers"), "{e}");
        let nan = vec![("compute".to_string(), vec![f64::NAN; 3])];
        let e = stacked_bars(&d.join("x"), &BarChart { layers: &nan, ..c }).unwrap_err();
        assert!(e.contains("no finite values"), "{e}");
    }

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
        assert_eq!(value(16182.82224), "16183");
        assert_eq!(value(10.0), "10");
        assert_eq!(value(0.125), "0.125");
    }

    #[test]
    fn log_paths_follow_the_linear_interpolation() {
        let p = path(&[(1.0, 0.0), (100.0, 99.0)], true);
        assert_eq!(p.len(), 33);
        assert!(p.iter().all(|(x, y)| (y - (x - 1.0)).abs() < 1e-9));
        assert_eq!(path(&[(1.0, 0.0), (100.0, 99.0)], false).len(), 2);
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

    #[test]
    fn log_scale_is_chosen_for_geometric_spacing() {
        assert!(auto_log(&[10.0, 46.0, 215.0, 1000.0]));
        assert!(!auto_log(&[10.0, 340.0, 670.0, 1000.0]));
        assert!(!auto_log(&[0.0, 10.0, 100.0, 1000.0]));
        assert!(!auto_log(&[1.0, 2.0, 4.0]));
        assert!(auto_log(&[1.0, 1000.0]));
        assert!(!auto_log(&[5.0]));
    }

    #[test]
    fn file_names_are_safe() {
        let f = vec![("nodes".to_string(), serde_json::json!(640)), ("topo".to_string(), serde_json::json!("a/b c"))];
        assert_eq!(file_part(&f), "nodes=640,topo=a_b_c");
    }
}
