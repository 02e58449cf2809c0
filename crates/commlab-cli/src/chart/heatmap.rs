//! Heat maps: a grid of cells, one per (column, row), coloured by value on a fixed sequential
//! scale (viridis), with a colour bar; optionally each cell's value written in it. Missing
//! (non-finite) cells are drawn light grey.

use super::axis::{bounds, nice_ticks, short_number, tick, tick_scale};
use super::render::render;
use super::spec::{Heatmap, SIZE};
use super::style::err;
use super::style::{text, GRID, INK};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// Viridis at 9 evenly spaced stops (matplotlib's `viridis`, sampled), dark to light.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

const MISSING: RGBColor = RGBColor(235, 235, 235);

/// The colour of `t` in [0, 1] (linear between the stops).
fn scale(t: f64) -> RGBColor {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn check(chart: &Heatmap) -> Result<(f64, f64), String> {
    let what = format!("heat map `{}`", chart.title);
    if chart.columns.is_empty() || chart.rows.is_empty() {
        return Err(format!("{what}: no cells to plot"));
    }
    if chart.values.len() != chart.rows.len() {
        return Err(format!("{what}: {} rows of values for {} rows", chart.values.len(), chart.rows.len()));
    }
    if let Some((i, r)) = chart.values.iter().enumerate().find(|(_, r)| r.len() != chart.columns.len()) {
        return Err(format!(
            "{what}: row `{}` has {} values for {} columns",
            chart.rows[i],
            r.len(),
            chart.columns.len()
        ));
    }
    let (lo, hi) = bounds(chart.values.iter().flatten().copied()).ok_or_else(|| format!("{what}: no finite values"))?;
    let lo = if lo >= 0.0 { 0.0 } else { lo };
    Ok(if hi > lo { (lo, hi) } else { (lo, lo + 1.0) })
}

/// Draw a heat map into `<stem>.png` and `<stem>.svg`; returns both paths.
pub(crate) fn heatmap(stem: &Path, chart: &Heatmap) -> Result<Vec<PathBuf>, String> {
    let range = check(chart)?;
    render(stem, |r| draw(r, chart, range), |r| draw(r, chart, range))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Heatmap,
    (lo, hi): (f64, f64),
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let body = root.margin(8, 0, 0, 0).titled(chart.title, text(22.0)).map_err(err)?;
    let (plot_area, bar_area) = body.split_horizontally(SIZE.0 - 150);
    let (nx, ny) = (chart.columns.len(), chart.rows.len());
    let mut c = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_right(20)
        .x_label_area_size(56)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)
        .map_err(err)?;
    c.configure_mesh()
        .disable_mesh()
        .axis_style(INK)
        .x_labels(0)
        .y_labels(0)
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .axis_desc_style(text(17.0))
        .draw()
        .map_err(err)?;
    for (j, row) in chart.values.iter().enumerate() {
        for (i, v) in row.iter().enumerate() {
            let colour = if v.is_finite() { scale((v - lo) / (hi - lo)) } else { MISSING };
            let (x0, y0) = (i as f64, j as f64);
            c.draw_series(std::iter::once(Rectangle::new([(x0, y0), (x0 + 1.0, y0 + 1.0)], colour.filled())))
                .map_err(err)?;
            if chart.annotate && v.is_finite() {
                let (px, py) = c.backend_coord(&(x0 + 0.5, y0 + 0.5));
                let t = (v - lo) / (hi - lo);
                let ink = if t > 0.6 { INK } else { WHITE };
                root.draw(&Text::new(
                    short_number(*v),
                    (px, py),
                    text(14.0).color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(err)?;
            }
        }
    }
    // Tick labels at cell centres (at most ~20 per axis).
    let every = |n: usize| n.div_ceil(20).max(1);
    for (i, name) in chart.columns.iter().enumerate().filter(|(i, _)| i % every(nx) == 0) {
        let (px, py) = c.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(name.clone(), (px, py + 6), text(14.0).pos(Pos::new(HPos::Center, VPos::Top))))
            .map_err(err)?;
    }
    for (j, name) in chart.rows.iter().enumerate().filter(|(j, _)| j % every(ny) == 0) {
        let (px, py) = c.backend_coord(&(0.0, j as f64 + 0.5));
        root.draw(&Text::new(name.clone(), (px - 6, py), text(14.0).pos(Pos::new(HPos::Right, VPos::Center))))
            .map_err(err)?;
    }
    // The colour bar: a vertical strip from lo (bottom) to hi (top), with ticks.
    let (_, h) = bar_area.dim_in_pixel();
    let (top, bottom) = (60i32, h as i32 - 90);
    let (x0, x1) = (20i32, 44i32);
    let steps = 64;
    for k in 0..steps {
        let y_hi = bottom - (bottom - top) * (k + 1) / steps;
        let y_lo = bottom - (bottom - top) * k / steps;
        let t = (k as f64 + 0.5) / steps as f64;
        bar_area.draw(&Rectangle::new([(x0, y_hi), (x1, y_lo)], scale(t).filled())).map_err(err)?;
    }
    bar_area.draw(&Rectangle::new([(x0, top), (x1, bottom)], ShapeStyle::from(&GRID).stroke_width(1))).map_err(err)?;
    let ts = tick_scale(lo, hi);
    for v in nice_ticks(lo, hi, 4) {
        let at = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        let y = bottom - ((bottom - top) as f64 * at).round() as i32;
        bar_area.draw(&PathElement::new(vec![(x1, y), (x1 + 4, y)], INK.stroke_width(1))).map_err(err)?;
        bar_area
            .draw(&Text::new(tick(v, ts), (x1 + 8, y), text(13.0).pos(Pos::new(HPos::Left, VPos::Center))))
            .map_err(err)?;
    }
    bar_area
        .draw(&Text::new(chart.unit, (x0, top - 14), text(14.0).pos(Pos::new(HPos::Left, VPos::Bottom))))
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{is_png, tmp};
    use super::*;

    #[test]
    fn heat_maps_draw_and_check_their_input() {
        let d = tmp("heat");
        let columns: Vec<String> = ["1", "2", "3"].map(String::from).to_vec();
        let rows: Vec<String> = ["4K", "64K"].map(String::from).to_vec();
        let values = vec![vec![10.0, 20.0, f64::NAN], vec![5.0, 1.0, 2.0]];
        let c = Heatmap {
            title: "test: heat",
            x_label: "stride",
            y_label: "working set",
            unit: "MB/s",
            columns: &columns,
            rows: &rows,
            values: &values,
            annotate: true,
        };
        let paths = heatmap(&d.join("h"), &c).unwrap();
        assert!(is_png(&paths[0]));
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        for needle in ["test: heat", "stride", "working set", "\n64K\n", "MB/s", "\n20\n"] {
            assert!(svg.contains(needle), "svg lacks {needle}");
        }
        let short = vec![vec![1.0]];
        let e = heatmap(&d.join("x"), &Heatmap { values: &short, ..c }).unwrap_err();
        assert!(e.contains("1 rows of values for 2 rows"), "{e}");
        let nan = vec![vec![f64::NAN; 3]; 2];
        let e = heatmap(&d.join("x"), &Heatmap { values: &nan, ..c }).unwrap_err();
        assert!(e.contains("no finite values"), "{e}");
        assert_eq!(scale(0.0), RGBColor(68, 1, 84));
        assert_eq!(scale(1.0), RGBColor(253, 231, 37));
    }
}
