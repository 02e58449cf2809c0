//! Line charts: one curve per series, crossovers marked, vertical markers, linear or log x.

use super::axis::{bounds, log_tick, log_ticks, short_number, tick, tick_scale, x_range, y_range};
use super::render::render;
use super::spec::{Cross, LineChart, Marker, SIZE};
use super::style::err;
use super::style::{colour, draw_cross, draw_legend, draw_point, legend_width, text, Swatch, GRID, INK, MARKER_INK};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

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
                    short_number(*x)
                ));
            }
        }
        if let Some(m) = markers.clone().find(|m| m.x <= 0.0) {
            return Err(format!(
                "{what}: log x axis, but marker `{}` is at x = {} (log needs x > 0)",
                m.label,
                short_number(m.x)
            ));
        }
        if let Some(c) = crosses.clone().find(|c| c.x <= 0.0) {
            return Err(format!(
                "{what}: log x axis, but crossover `{}` is at x = {} (log needs x > 0)",
                c.label,
                short_number(c.x)
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
    let legend = Legend::of(chart, d);
    let legend_w = legend_width(root, &legend.names());
    if chart.log_x {
        // The x axis's length in pixels: the plot area less the chart's margins and y labels.
        let px = (SIZE.0 - legend_w) as f64 - (12 + 20 + Y_LABEL_AREA) as f64;
        let style = text(14.0);
        let width = |s: &str| root.estimate_text_size(s, &style).map(|w| w.0 as f64).unwrap_or(9.0 * s.len() as f64);
        let xs: Vec<f64> = d.curves.iter().flatten().map(|p| p.0).collect();
        let ticks = log_ticks(&xs, d.x, chart.x_kind, px, &width);
        draw_line_in(root, chart, d, &legend, legend_w, (d.x.0..d.x.1).log_scale().with_key_points(ticks))
    } else {
        draw_line_in(root, chart, d, &legend, legend_w, d.x.0..d.x.1)
    }
}

/// Width in pixels of the area left of the plot that holds the y tick labels.
const Y_LABEL_AREA: u32 = 84;

/// The legend panel's contents: one entry per series (and crossover, marker), and the
/// markers' table.
struct Legend {
    entries: Vec<(Swatch, String)>,
    table: Vec<String>,
}

impl Legend {
    fn of(chart: &LineChart, d: &LineData) -> Legend {
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
        // The markers are also listed under the legend, left to right with their x, so that
        // close ones (the latency experiment has 13 between x = 7 and 17) can be read there.
        let mut listed: Vec<&Marker> = chart.markers.iter().filter(|m| m.x.is_finite()).collect();
        listed.sort_by(|a, b| a.x.total_cmp(&b.x));
        let table: Vec<String> = listed.iter().map(|m| format!("{}  {}", m.label, short_number(m.x))).collect();
        Legend { entries, table }
    }

    fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.1.as_str()).chain(self.table.iter().map(String::as_str)).collect()
    }
}

/// A line chart with its legend, markers, curves and crossover labels, on `root`.
fn draw_line_in<DB, XR>(
    root: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    d: &LineData,
    legend: &Legend,
    legend_w: u32,
    xr: XR,
) -> Result<(), String>
where
    DB: DrawingBackend,
    XR: AsRangedCoord<Value = f64>,
    XR::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    root.fill(&WHITE).map_err(err)?;
    let body = root.margin(8, 0, 0, 0).titled(chart.title, text(22.0)).map_err(err)?;
    let entries = &legend.entries;
    let (plot_area, legend_area) = body.split_horizontally(SIZE.0 - legend_w);
    let legend_area = legend_area.margin(30, 0, 0, 6);
    draw_legend(&legend_area, entries)?;
    draw_marker_table(&legend_area, legend)?;

    let mut c = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(56)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(xr, d.y.0..d.y.1)
        .map_err(err)?;
    let (xs, ys) = (tick_scale(d.x.0, d.x.1), tick_scale(d.y.0, d.y.1));
    let (log_x, x_kind) = (chart.log_x, chart.x_kind);
    let x_text = move |v: &f64| if log_x { log_tick(*v, x_kind) } else { tick(*v, xs) };
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
        .x_label_formatter(&x_text)
        .y_label_formatter(&|v| tick(*v, ys))
        .draw()
        .map_err(err)?;

    // Markers first, so curves draw over them. Labels are packed in rows from the top of the
    // plot: each goes in the first row where it clears every label already there, so no two
    // overlap however close the markers are; a label sits just right of its dashed line.
    let (ylo, yhi) = d.y;
    let mut markers: Vec<&Marker> = chart.markers.iter().filter(|m| m.x.is_finite()).collect();
    markers.sort_by(|a, b| a.x.total_cmp(&b.x));
    let marker_style = text(13.0).color(&MARKER_INK);
    let mut spans = Vec::new();
    for m in &markers {
        c.draw_series(DashedLineSeries::new(vec![(m.x, ylo), (m.x, yhi)], 6, 4, MARKER_INK.stroke_width(1)))
            .map_err(err)?;
        let (px, _) = c.backend_coord(&(m.x, yhi));
        let (w, _) = root.estimate_text_size(&m.label, &marker_style).map_err(err)?;
        spans.push((px + 3, px + 3 + w as i32 + 2));
    }
    let (_, top) = c.backend_coord(&(d.x.0, yhi));
    for (m, (row, span)) in markers.iter().zip(pack_rows(&spans).into_iter().zip(&spans)) {
        let y = top + 4 + 16 * row as i32;
        root.draw(&Rectangle::new([(span.0, y - 1), (span.1, y + 14)], WHITE.filled())).map_err(err)?;
        root.draw(&Text::new(m.label.clone(), (span.0 + 1, y), marker_style.clone())).map_err(err)?;
    }
    for (k, pts) in d.curves.iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        c.draw_series(LineSeries::new(pts.iter().copied(), colour(k).stroke_width(2))).map_err(err)?;
        for &(x, y) in pts {
            let (px, py) = c.backend_coord(&(x, y));
            draw_point(root, k, px, py)?;
        }
    }
    draw_crossovers(root, chart, d, &|p: &(f64, f64)| c.backend_coord(p))?;
    Ok(())
}

/// The markers' table under the legend (each label and its x), as many rows as fit.
fn draw_marker_table<DB: DrawingBackend>(legend_area: &DrawingArea<DB, Shift>, legend: &Legend) -> Result<(), String> {
    let (entries, table) = (&legend.entries, &legend.table);
    if !table.is_empty() {
        let top = 40 + 24 * entries.len() as i32 + 20;
        let room = (legend_area.dim_in_pixel().1 as i32 - top - 40) / 16;
        legend_area.draw(&Text::new("markers (x)", (10, top), text(14.0).color(&MARKER_INK))).map_err(err)?;
        for (i, line) in table.iter().enumerate().take(room.max(0) as usize) {
            let shown = if i + 1 == room as usize && table.len() > i + 1 { "...".to_string() } else { line.clone() };
            let y = top + 20 + 16 * i as i32;
            legend_area.draw(&Text::new(shown, (12, y), text(13.0).color(&MARKER_INK))).map_err(err)?;
        }
    }
    Ok(())
}

/// Maps a data point (x, y) to its pixel.
type ToPixel<'a> = &'a dyn Fn(&(f64, f64)) -> (i32, i32);

/// The crossover marks and their labels; `to_px` maps a data point to its pixel.
fn draw_crossovers<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    d: &LineData,
    to_px: ToPixel<'_>,
) -> Result<(), String> {
    // Crossover labels: each in the first free place around its mark, clear of every mark and
    // of every label placed before it, stepping further up or down (with a leader line back to
    // the mark) until one is free.
    let style = text(13.0);
    let mut measured: Vec<f64> = d.curves.iter().flatten().map(|p| p.0).collect();
    measured.sort_by(f64::total_cmp);
    measured.dedup();
    let crosses: Vec<(&Cross, (i32, i32))> = chart
        .crossovers
        .iter()
        .filter(|x| x.x.is_finite() && x.y.is_finite())
        .map(|x| {
            let (x0, x1, t) = if chart.log_x { along_segment(x.x, &measured) } else { (x.x, x.x, 0.0) };
            let ((p0, py), (p1, _)) = (to_px(&(x0, x.y)), to_px(&(x1, x.y)));
            (x, (p0 + (t * (p1 - p0) as f64).round() as i32, py))
        })
        .collect();
    let mut sizes = Vec::new();
    for (x, _) in &crosses {
        let (w, h) = root.estimate_text_size(&x.label, &style).map_err(err)?;
        sizes.push((w as i32, h as i32 + 2));
    }
    let marks: Vec<(i32, i32)> = crosses.iter().map(|(_, p)| *p).collect();
    // The drawn curves in pixels, so that no label is put across one.
    let segments: Vec<Segment> =
        d.curves.iter().flat_map(|pts| pts.windows(2).map(|w| (to_px(&w[0]), to_px(&w[1])))).collect();
    let places = place_labels(&marks, &sizes, &segments);
    for (&(px, py), _) in marks.iter().zip(&places) {
        draw_cross(root, px, py)?;
    }
    for (((x, (px, py)), at), (w, h)) in crosses.iter().zip(&places).zip(&sizes) {
        let (lx, ly) = (at.0 + w / 2, if at.1 > *py { at.1 } else { at.1 + h });
        if (lx - px).abs() > w / 2 + 12 || (ly - py).abs() > 26 {
            root.draw(&PathElement::new(vec![(*px, *py), (lx, ly)], INK.mix(0.6))).map_err(err)?;
        }
        root.draw(&Rectangle::new([(at.0 - 1, at.1 - 1), (at.2 + 1, at.3 - 1)], WHITE.mix(0.85).filled()))
            .map_err(err)?;
        root.draw(&Text::new(x.label.clone(), (at.0, at.1), style.clone())).map_err(err)?;
    }
    Ok(())
}

/// A rectangle in pixels: (left, top, right, bottom).
type Rect = (i32, i32, i32, i32);

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Rows for labels spanning `spans` (left, right) in pixels: each label in the first row where
/// it overlaps no label already placed (so no two labels in a row overlap).
fn pack_rows(spans: &[(i32, i32)]) -> Vec<usize> {
    let mut rows: Vec<Vec<(i32, i32)>> = Vec::new();
    spans
        .iter()
        .map(|&(l, r)| {
            let row = rows.iter().position(|row| row.iter().all(|&(a, b)| r <= a || b <= l)).unwrap_or(rows.len());
            if row == rows.len() {
                rows.push(Vec::new());
            }
            rows[row].push((l, r));
            row
        })
        .collect()
}

/// A straight piece of a drawn curve, in pixels.
type Segment = ((i32, i32), (i32, i32));

/// Whether segment `s` crosses or touches rectangle `r` (Liang-Barsky clipping).
fn crosses_rect(((x0, y0), (x1, y1)): Segment, r: Rect) -> bool {
    let (dx, dy) = ((x1 - x0) as f64, (y1 - y0) as f64);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, (x0 - r.0) as f64), (dx, (r.2 - x0) as f64), (-dy, (y0 - r.1) as f64), (dy, (r.3 - y0) as f64)]
    {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    t0 <= t1
}

/// Places for crossover labels of sizes `sizes` (width, height) beside marks at `marks`: the
/// nearest of a grid of places (right or left of the mark, one label height further up or
/// down and half a label width further out at each step) that overlaps no mark (a 20-pixel
/// square), no label already placed and no drawn curve (`segments`), so a label never sits
/// on a curve (issue 36); failing that (a crowd of curves), the nearest clear of marks and
/// labels.
fn place_labels(marks: &[(i32, i32)], sizes: &[(i32, i32)], segments: &[Segment]) -> Vec<Rect> {
    let mark_boxes: Vec<Rect> = marks.iter().map(|&(x, y)| (x - 10, y - 10, x + 10, y + 10)).collect();
    let mut taken: Vec<Rect> = Vec::new();
    for (&(px, py), &(w, h)) in marks.iter().zip(sizes) {
        let rungs = 4 * marks.len() as i32 + 4;
        // (distance, dx, dy), nearest first; the order within a distance is fixed.
        let mut grid: Vec<(i32, i32, i32)> = Vec::new();
        for k in 0..=rungs {
            for col in 0..4 {
                let out = col * w / 2;
                for (dx, dy) in [
                    (9 + out, -22 - k * h),
                    (9 + out, 8 + k * h),
                    (-9 - w - out, -22 - k * h),
                    (-9 - w - out, 8 + k * h),
                ] {
                    grid.push((k + col, dx, dy));
                }
            }
        }
        grid.sort_by_key(|g| g.0);
        let rect = |dx: i32, dy: i32| (px + dx, py + dy, px + dx + w, py + dy + h);
        let clear = |r: &Rect| !taken.iter().chain(&mark_boxes).any(|t| overlaps(*r, *t));
        let off_curves = |r: &Rect| !segments.iter().any(|s| crosses_rect(*s, *r));
        let places = || grid.iter().map(|&(_, dx, dy)| rect(dx, dy));
        let last = rect(9, -22 - rungs * h);
        let at = places().find(|r| clear(r) && off_curves(r)).or_else(|| places().find(clear)).unwrap_or(last);
        taken.push(at);
    }
    taken
}

/// Where a crossover at `x` sits on a log x axis, as (x0, x1, t): `t` of the way from x0 to
/// x1 on screen, the measured x values either side of it. Curves are drawn straight between
/// measured points, and `crossover.rs` interpolates linearly between them, so two curves
/// drawn straight cross at the same fraction of their segment as the computed crossover
/// (which on a log axis is not at the same x).
fn along_segment(x: f64, measured: &[f64]) -> (f64, f64, f64) {
    let below = measured.iter().copied().rfind(|m| *m <= x);
    let above = measured.iter().copied().find(|m| *m >= x);
    match (below, above) {
        (Some(x0), Some(x1)) if x1 > x0 => (x0, x1, (x - x0) / (x1 - x0)),
        _ => (x, x, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{is_png, tmp};
    use super::super::{Cross, Series, XKind};
    use super::*;

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
            x_kind: XKind::Plain,
        }
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
        // Markers are listed with their x under the legend as well as labelled on the plot.
        assert!(svg.contains("markers (x)") && svg.contains("alewife  2.5"), "no marker table");
    }

    #[test]
    fn a_log_axis_labels_every_processor_count_of_a_speedup_plot() {
        let s = [series("stache", &[(1.0, 1.0), (2.0, 1.8), (4.0, 3.1), (8.0, 5.0), (16.0, 7.2)])];
        let c = chart(&s, &[], &[], true);
        let svg = std::fs::read_to_string(&line_chart(&tmp("logticks").join("s"), &c).unwrap()[1]).unwrap();
        assert!(svg.contains(">16<") || svg.contains("\n16\n"), "16 is labelled");
        // Many points (a sweep's 398464 among them): round ticks, printed short.
        let pts: Vec<(f64, f64)> = (0..=24).map(|k| (1000.0 * 1.35f64.powi(k), 1.0)).chain([(398464.0, 1.0)]).collect();
        let many = [series("a", &pts)];
        let svg =
            std::fs::read_to_string(&line_chart(&tmp("logticks").join("m"), &chart(&many, &[], &[], true)).unwrap()[1])
                .unwrap();
        assert!(!svg.contains("398464") && !svg.contains("398.46k"), "a data x printed as a tick");
        assert!(svg.contains("\n100k\n") || svg.contains(">100k<"), "100k is a tick");
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
    fn crossover_labels_never_overlap_each_other_or_a_mark() {
        // Two crossovers a few pixels apart (as sm/mp-int and sm/mp-poll were, drawn over each
        // other), and a crowd of ten at one spot.
        for marks in [vec![(500, 300), (528, 284)], (0..10).map(|i| (400 + i, 300 - i)).collect::<Vec<_>>()] {
            let sizes: Vec<(i32, i32)> = marks.iter().map(|_| (70, 16)).collect();
            let at = place_labels(&marks, &sizes, &[]);
            for (i, a) in at.iter().enumerate() {
                for (j, b) in at.iter().enumerate() {
                    assert!(i == j || !overlaps(*a, *b), "labels {i} and {j} overlap: {a:?} {b:?}");
                }
                for (x, y) in &marks {
                    assert!(!overlaps(*a, (x - 10, y - 10, x + 10, y + 10)), "label {i} covers a mark");
                }
            }
        }
    }

    #[test]
    fn crossover_labels_stay_off_the_curves() {
        // Regression (issue 36, item 8): a label was put right of and above its mark, across
        // the rising curve. Two curves crossing at (500, 300) as an X, steep and shallow ones,
        // and two crossovers close together on one pair of lines.
        type Case = (Vec<(i32, i32)>, Vec<Segment>);
        let cases: Vec<Case> = vec![
            (vec![(500, 300)], vec![((100, 700), (900, -100)), ((100, -100), (900, 700))]),
            (vec![(500, 300)], vec![((460, 700), (540, -100)), ((460, -100), (540, 700))]),
            (vec![(500, 300)], vec![((100, 340), (900, 260)), ((100, 260), (900, 340))]),
            (
                vec![(400, 300), (600, 300)],
                vec![
                    ((200, 100), (400, 300)),
                    ((400, 300), (600, 300)),
                    ((600, 300), (800, 100)),
                    ((200, 300), (800, 300)),
                ],
            ),
        ];
        for (marks, segments) in cases {
            let sizes: Vec<(i32, i32)> = marks.iter().map(|_| (70, 16)).collect();
            let at = place_labels(&marks, &sizes, &segments);
            for (i, r) in at.iter().enumerate() {
                for s in &segments {
                    assert!(!crosses_rect(*s, *r), "label {i} {r:?} lies across the curve {s:?}");
                }
                for (x, y) in &marks {
                    assert!(!(r.0 <= *x && *x <= r.2 && r.1 <= *y && *y <= r.3), "label {i} {r:?} holds a crossover");
                }
            }
        }
        assert!(crosses_rect(((0, 0), (10, 10)), (4, 4, 6, 6)));
        assert!(!crosses_rect(((0, 0), (10, 0)), (4, 4, 6, 6)));
        assert!(crosses_rect(((5, 0), (5, 10)), (4, 4, 6, 6)));
    }

    #[test]
    fn marker_labels_are_packed_in_rows_without_overlap() {
        // 13 labels within 70 pixels, as the latency experiment's presets are.
        let spans: Vec<(i32, i32)> = (0..13).map(|i| (100 + 5 * i, 160 + 5 * i)).collect();
        let rows = pack_rows(&spans);
        for i in 0..spans.len() {
            for j in 0..i {
                let (a, b) = (spans[i], spans[j]);
                assert!(rows[i] != rows[j] || a.1 <= b.0 || b.1 <= a.0, "{i} and {j} overlap in row {}", rows[i]);
            }
        }
        // Far-apart labels share the first row.
        assert_eq!(pack_rows(&[(0, 10), (20, 30), (40, 50)]), vec![0, 0, 0]);
    }

    /// The point lists of the SVG's polylines drawn in series `k`'s colour, 2 pixels wide.
    fn curve_polylines(svg: &str, k: usize) -> Vec<Vec<(i32, i32)>> {
        let c = colour(k);
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"", c.0, c.1, c.2);
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
            .map(|l| {
                let pts = l.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
                pts.split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn curves_are_the_measured_points_joined_straight() {
        // Regression (issue 36, item 8): on a log axis each segment was drawn through 32
        // interpolated points, a smooth curve between 3 to 5 measured ones.
        let pts = [(10.0, 5.0), (100.0, 40.0), (1000.0, 20.0), (5000.0, 90.0)];
        let s = [series("a", &pts), series("b", &[(10.0, 30.0), (5000.0, 30.0)])];
        for log in [true, false] {
            let svg =
                std::fs::read_to_string(&line_chart(&tmp("straight").join("c"), &chart(&s, &[], &[], log)).unwrap()[1])
                    .unwrap();
            // The legend swatch is a 2-point line; the curve is the other polyline.
            let lines = curve_polylines(&svg, 0);
            assert_eq!(lines.len(), 2, "log {log}: {lines:?}");
            assert_eq!(lines[1].len(), pts.len(), "log {log}: the drawn curve is not the measured points");
            assert_eq!(curve_polylines(&svg, 1)[1].len(), 2);
            // Vertices go left to right, one per measured point.
            assert!(lines[1].windows(2).all(|w| w[0].0 < w[1].0), "{:?}", lines[1]);
        }
    }

    #[test]
    fn a_crossover_on_a_log_axis_sits_where_the_straight_segments_cross() {
        // Linear interpolation puts the crossover of (10, 0)-(1000, 100) and (10, 100)-(1000, 0)
        // at x = 505, half way along the segment; drawn straight on a log axis the lines cross
        // half way across the screen, at x = 100.
        let measured = [10.0, 1000.0];
        assert_eq!(along_segment(505.0, &measured), (10.0, 1000.0, 0.5));
        assert_eq!(along_segment(10.0, &measured), (10.0, 10.0, 0.0));
        assert_eq!(along_segment(5.0, &measured), (5.0, 5.0, 0.0));
    }
}
